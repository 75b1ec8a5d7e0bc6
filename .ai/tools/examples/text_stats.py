"""Counts the words and sentences of a text and finds its most frequent words.

A RYE-format Python tool: module-level metadata read without running the file, a CONFIG_SCHEMA
that validates (and fills defaults of) the parameters, and execute(params, project_path), which
runs in a warm Python host (the function runtime) and returns a dict.
"""
import re
from collections import Counter

__version__ = "1.0.0"
__tool_type__ = "python"
__executor_id__ = "rye/core/runtimes/python_function_runtime"
__category__ = "examples"
__tool_description__ = "Counts words and sentences of a text and lists its most frequent words."

CONFIG_SCHEMA = {
    "type": "object",
    "properties": {
        "text": {"type": "string", "description": "The text to measure"},
        "top": {"type": "integer", "minimum": 1, "default": 3, "description": "How many frequent words"},
    },
    "required": ["text"],
}

OUTPUT_SCHEMA = {
    "type": "object",
    "properties": {
        "words": {"type": "integer"},
        "sentences": {"type": "integer"},
        "top": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["words", "sentences", "top"],
}

STOP_WORDS = {"a", "an", "and", "the", "of", "to", "in", "is", "it", "that"}


def execute(params, project_path):
    words = re.findall(r"[a-z']+", params["text"].lower())
    sentences = [s for s in re.split(r"[.!?]+", params["text"]) if s.strip()]
    counts = Counter(w for w in words if w not in STOP_WORDS)
    top = [w for w, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[: params["top"]]]
    return {"success": True, "words": len(words), "sentences": len(sentences), "top": top}
