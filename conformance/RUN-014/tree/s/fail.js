process.stdout.write('partial output');
process.stderr.write('something broke');
process.exit(3);
