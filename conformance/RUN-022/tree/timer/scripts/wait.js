// Writes its pid where alive.js looks, then waits argv[2] milliseconds.
const fs = require("fs");
const path = require("path");
fs.writeFileSync(path.join(process.env.TMPDIR, "wait.pid"), String(process.pid));
setTimeout(() => console.log("waited"), Number(process.argv[2] || 0));
