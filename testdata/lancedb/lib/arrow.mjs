// The apache-arrow module the harness uses: the CommonJS build, which is the
// copy LanceDB itself loads, so tables we build and tables LanceDB returns
// share classes (instanceof checks inside LanceDB) and enums.
import { createRequire } from "node:module";

/** apache-arrow, CommonJS build. */
export const arrow = createRequire(import.meta.url)("apache-arrow");
