/** Types of scripts/test-build.mjs for the TypeScript that imports it (its test). */
export function buildTests(
  files: string[],
  options: { root: string; outDir: string },
): Promise<Map<string, string>>;
