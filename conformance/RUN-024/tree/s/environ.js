// What a script can read of its parent's (the server's) environment block.
// Refused (RUN-023, as any uid but root) and wiped (RUN-024, as root) both
// leave it nothing, so the output is the same either way.
const fs = require('fs');
let block = Buffer.alloc(0);
try {
  block = fs.readFileSync(`/proc/${process.ppid}/environ`);
} catch (e) {
  // Refused: nothing read.
}
const variablesSeen = block.toString('latin1').split('\0').filter((v) => v !== '').map((v) => v.split('=')[0]).sort();
const secretSeen = block.includes('hunter2');
process.stdout.write(JSON.stringify({variablesSeen, secretSeen}));
