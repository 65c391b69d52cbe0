process.stdout.write('second run');
