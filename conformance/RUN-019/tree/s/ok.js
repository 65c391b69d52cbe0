process.stdout.write('ok');
