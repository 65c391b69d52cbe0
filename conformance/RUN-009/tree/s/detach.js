const { spawn } = require('child_process');
const c = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)'], { detached: true, stdio: 'inherit' });
c.unref();
process.stdout.write('leader done');
