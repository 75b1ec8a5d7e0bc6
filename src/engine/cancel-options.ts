/** Options of cancelling a run (`Engine.cancelRun`, `Dirigent.cancel` and every face of it). */
export interface CancelOptions {
  /**
   * Whether the compensations of the run's completed steps run before it ends `cancelled`
   * (default true). With false the run ends at once and what its steps did stays as it is.
   */
  compensate?: boolean;
}
