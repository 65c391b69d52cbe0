process.exit(1);
