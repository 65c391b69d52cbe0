console.log(Object.keys(process.env).sort().join(","));
