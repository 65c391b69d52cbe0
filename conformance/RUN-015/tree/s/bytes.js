process.stdout.write(Buffer.from([0xff, 0xfe, 0x41, 0x00]));
process.stderr.write('plain');
