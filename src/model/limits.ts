/**
 * Bounds on what a model output file may declare, checked against its header before anything is
 * allocated: NetCDF and HDF5 files from disk are untrusted, and a header costs nothing to forge.
 * The largest real grids of the chain (EEMEP global 0.1°: 3600 × 1800 = 6.5 million cells; 72-hour
 * runs: 72 steps) are far inside them.
 */
export const MODEL_LIMITS = {
  /** Cells of one field (nx × ny): one step of one variable is 4 bytes per cell in memory. */
  maxCellsPerField: 50_000_000,
  /** Time steps of a file. */
  maxTimeSteps: 10_000,
  /** Bytes of a NetCDF-3 header (dimensions, attributes, variable descriptions). */
  maxClassicHeaderBytes: 16 * 1024 * 1024,
  /** Elements of an attribute that is read (longer ones are ignored: no real attribute is that long). */
  maxAttributeElements: 65_536,
  /** Elements of a small variable read whole: a 1-D axis or a 2-D coordinate array. */
  maxCoordinateElements: 50_000_000,
} as const;
