// Reads the protocol conformance suite (clients/conformance/*.json), which FerryKit's
// own behaviour generated (Tests/FerryKitUnitTests/Conformance).
import { readFileSync } from "node:fs";

export function load<T = any>(name: string): T {
  // dist/test/x.js → clients/conformance
  return JSON.parse(readFileSync(new URL(`../../../conformance/${name}`, import.meta.url), "utf8"));
}
