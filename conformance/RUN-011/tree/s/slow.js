setTimeout(() => process.stdout.write('done'), 1500);
