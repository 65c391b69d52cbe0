process.stdout.write('before');
process.kill(process.pid, 'SIGKILL');
