// Reports what the execution fence handed this script: its arguments
// exactly as received, its working directory, and the NAMES (never the
// values) of the variables in its environment.
const report = {
  argv: process.argv.slice(2),
  cwd: process.cwd(),
  envNames: Object.keys(process.env).sort(),
  node: process.version,
};
process.stdout.write(JSON.stringify(report, null, 2) + "\n");
process.stderr.write(`report.js: ${report.argv.length} argument(s)\n`);
