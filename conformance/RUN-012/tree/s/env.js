const names = Object.keys(process.env).sort();
process.stdout.write(JSON.stringify({names, WANTED: process.env.WANTED ?? null, KEY: process.env.KEY ?? null}));
