/**
 * A deterministic plume-like ash field for the contouring benchmark: a source in the west, a plume
 * bending downwind and widening, a branch split off by wind shear, and turbulent structure (sums of
 * sinusoids) so the level sets have lobes, holes and separate patches. Values in mg/m³, peaking around
 * 40 near the source, crossing 0.2, 2 and 4; everything below 0.2 well inside the grid edges.
 */
export interface Field {
  nx: number;
  ny: number;
  values: Float32Array;
}

export function plumeField(nx = 800, ny = 500): Field {
  const values = new Float32Array(nx * ny);
  const sx = nx * 0.1;
  const sy = ny * 0.62;
  for (let y = 0; y < ny; y++) {
    for (let x = 0; x < nx; x++) {
      const u = (x - sx) / nx; // downwind distance, as a fraction of the grid width
      if (u < -0.03) continue;
      const along = Math.max(u, 0);
      const turbulence = Math.max(
        0,
        1 + 0.45 * Math.sin(x / 17 + y / 23) * Math.cos(y / 11 - x / 29) + 0.25 * Math.sin(x / 5.3 + 2 * Math.sin(y / 7.1)),
      );
      const upwind = u < 0 ? Math.exp(-((u / 0.01) ** 2)) : 1;
      const taper = u > 0.55 ? Math.exp(-(((u - 0.55) / 0.09) ** 2)) : 1;
      const decay = (30 * Math.exp(-3 * along)) / (1 + 5 * along);
      // Main plume: centre line bending north-east then east.
      const centre = sy - ny * (0.6 * along - 0.5 * along * along + 0.03 * Math.sin(10 * along));
      const width = ny * (0.015 + 0.16 * along);
      const d = (y - centre) / width;
      // Branch: sheared south-east from a third of the way downwind.
      const b = Math.max(u - 0.2, 0);
      const branchCentre = centre + ny * 0.9 * b;
      const branchWidth = ny * (0.02 + 0.08 * b);
      const e = (y - branchCentre) / branchWidth;
      const branch = u > 0.2 ? 0.6 * (1 - Math.exp(-b / 0.05)) * Math.exp(-0.5 * e * e) : 0;
      values[y * nx + x] = decay * (Math.exp(-0.5 * d * d) + branch) * turbulence * upwind * taper;
    }
  }
  return { nx, ny, values };
}
