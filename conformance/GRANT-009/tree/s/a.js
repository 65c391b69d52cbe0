console.log("a");
