import { closest, didYouMean } from '../errors/did-you-mean.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { Limits } from './ast.js';
import type { Diagnostics } from './diagnostics.js';
import { ElementReader } from './element-reader.js';
import { readOn, readSchedule } from './read-triggers.js';
import type { EventDecl, ScheduleDecl } from './trigger-decl.js';
import {
  noRunSettings,
  readRunSetting,
  RUN_SETTING_TAGS,
  type RunSettings,
} from './run-settings.js';
import { elementsOf, serializeChildren, textOf, type XmlElement } from './xml-element.js';

/** What `<metadata>` yields. */
export interface MetadataParts {
  description: string | undefined;
  category: string | undefined;
  author: string | undefined;
  limits: Limits;
  permissions: string[] | undefined;
  /** Names of the secrets `<secrets>` declares. */
  secrets: string[];
  /** Documentary metadata kept as plain data. */
  extra: Record<string, unknown>;
  /** `<schedule>`s: runs per cron tick. */
  schedules: ScheduleDecl[];
  /** `<on event>`s: runs per event. */
  events: EventDecl[];
  /** `<tag>`, `<priority>`, `<concurrency>`, `<retention>`. */
  runSettings: RunSettings;
}

const ENFORCED_LIMITS = ['duration_seconds', 'depth', 'spawns', 'max_steps'];
const KEPT_LIMITS = [
  'turns',
  'tokens',
  'spend',
  'spend_currency',
  'max_turns',
  'max_tokens',
  'max_spend',
];
const KNOWN_METADATA = [
  'description',
  'category',
  'author',
  'model',
  'model_class',
  'limits',
  'permissions',
  'secrets',
  'hooks',
  'context',
  'cost',
  'name',
  'version',
  'schedule',
  'on',
  ...RUN_SETTING_TAGS,
];
const PRIMARIES = ['execute', 'search', 'load', 'sign'];

/** Reads `<metadata>`; only `<limits>` and `<permissions>` are enforced, the rest is kept. */
export function readMetadata(el: XmlElement | undefined, diag: Diagnostics): MetadataParts {
  const out: MetadataParts = {
    description: undefined,
    category: undefined,
    author: undefined,
    limits: emptyLimits(),
    permissions: undefined,
    secrets: [],
    extra: {},
    schedules: [],
    events: [],
    runSettings: noRunSettings(),
  };
  if (el === undefined) return out;
  for (const kid of elementsOf(el)) {
    switch (kid.tag) {
      case 'description':
      case 'category':
      case 'author':
        out[kid.tag] = textOf(kid);
        break;
      case 'limits':
        out.limits = readLimits(kid, diag);
        break;
      case 'permissions':
        out.permissions = readPermissions(kid, diag);
        break;
      case 'secrets':
        out.secrets = readSecrets(kid, diag);
        break;
      case 'schedule': {
        const s = readSchedule(kid, out.schedules.length + 1, diag);
        if (s !== undefined) out.schedules.push(s);
        break;
      }
      case 'on': {
        const e = readOn(kid, diag);
        if (e !== undefined) out.events.push(e);
        break;
      }
      case 'tag':
      case 'priority':
      case 'concurrency':
      case 'retention':
        readRunSetting(kid, out.runSettings, diag);
        break;
      case 'model':
      case 'model_class':
        out.extra[kid.tag] = { ...kid.attrs };
        break;
      default: {
        const near = closest(kid.tag, ['limits', 'permissions']);
        if (near !== undefined && !KNOWN_METADATA.includes(kid.tag)) {
          diag.error(
            ErrorCode.UNKNOWN_ELEMENT,
            `<metadata> has no element <${kid.tag}>. Did you mean "${near}"?`,
            kid.loc,
            `Write <${near}>; other metadata elements (${KNOWN_METADATA.filter((k) => k !== 'limits' && k !== 'permissions').join(', ')}, …) are kept as documentation.`,
          );
        } else {
          out.extra[kid.tag] = serializeChildren(kid.children).trim();
        }
      }
    }
  }
  return out;
}

const SECRET_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `<secrets><secret name="API_TOKEN">what it is for</secret>…</secrets>`: the names. */
function readSecrets(el: XmlElement, diag: Diagnostics): string[] {
  const names: string[] = [];
  for (const kid of elementsOf(el)) {
    const name = kid.attrs.name;
    if (kid.tag !== 'secret' || name === undefined || !SECRET_NAME.test(name)) {
      diag.error(
        ErrorCode.INVALID_ATTRIBUTE,
        kid.tag !== 'secret'
          ? `<secrets> holds <${kid.tag}>; it holds only <secret name="…"> elements.`
          : `<secret> needs a name that is an environment variable's (letters, digits, _), not ${name === undefined ? 'nothing' : `"${name}"`}.`,
        kid.loc,
        'Write <secret name="API_TOKEN">what it is for</secret>.',
      );
    } else if (!names.includes(name)) names.push(name);
  }
  return names;
}

/** Limits with nothing set. */
export function emptyLimits(): Limits {
  return {
    durationSeconds: undefined,
    depth: undefined,
    spawns: undefined,
    maxSteps: undefined,
    other: {},
  };
}

function readLimits(el: XmlElement, diag: Diagnostics): Limits {
  const r = new ElementReader(el, diag, [...ENFORCED_LIMITS, ...KEPT_LIMITS]);
  const other: Record<string, string | number> = {};
  for (const name of KEPT_LIMITS) {
    const raw = el.attrs[name];
    if (raw !== undefined)
      other[name] = Number.isFinite(Number(raw)) && raw.trim() !== '' ? Number(raw) : raw;
  }
  return {
    durationSeconds: r.num('duration_seconds'),
    depth: r.int('depth', 0),
    spawns: r.int('spawns', 0),
    maxSteps: r.int('max_steps', 1),
    other,
  };
}

/**
 * Turns `<permissions>` into capability patterns (RYE §1.4): `<execute><tool>rye.fs.*</tool>`
 * gives `rye.execute.tool.rye.fs.*`; text `*` gives everything under its primary.
 */
export function readPermissions(el: XmlElement, diag: Diagnostics): string[] {
  new ElementReader(el, diag, []);
  const kids = elementsOf(el);
  if (kids.length === 0) {
    const text = textOf(el);
    return text === '*' ? ['rye.*'] : text === '' ? [] : [text];
  }
  const caps: string[] = [];
  for (const kid of kids) {
    if (kid.tag === 'cap') caps.push(textOf(kid));
    else if (kid.tag === 'acknowledge') continue;
    // Any other tag is a primary action: RYE's four, and later ones such as `fetch`.
    else if (PRIMARIES.includes(kid.tag) || /^[a-z][a-z_]*$/.test(kid.tag)) {
      const inner = elementsOf(kid);
      if (inner.length === 0) {
        const text = textOf(kid);
        caps.push(text === '*' || text === '' ? `rye.${kid.tag}.*` : `rye.${kid.tag}.${text}`);
      }
      for (const item of inner) caps.push(`rye.${kid.tag}.${item.tag}.${textOf(item)}`);
    } else {
      diag.error(
        ErrorCode.UNKNOWN_ELEMENT,
        `<permissions> holds <execute>, <search>, <load>, <sign> or <cap>, not <${kid.tag}>.${didYouMean(kid.tag, [...PRIMARIES, 'cap'])}`,
        kid.loc,
        'Example: <permissions><execute><tool>dirigent.util.*</tool></execute></permissions>.',
      );
    }
  }
  return caps;
}
