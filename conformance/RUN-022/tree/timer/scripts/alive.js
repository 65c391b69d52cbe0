// Prints "alive" when the last wait.js still runs, else "gone".
const fs = require("fs");
const path = require("path");
const pid = Number(fs.readFileSync(path.join(process.env.TMPDIR, "wait.pid"), "utf8"));
try {
  process.kill(pid, 0);
  console.log("alive");
} catch {
  console.log("gone");
}
