process.stdout.write(JSON.stringify(process.argv.slice(2)));
