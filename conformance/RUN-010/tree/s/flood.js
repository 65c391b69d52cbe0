const b = Buffer.alloc(1024 * 1024, 'x');
for (let i = 0; i < 5; i++) { process.stdout.write(b); process.stderr.write(b); }
