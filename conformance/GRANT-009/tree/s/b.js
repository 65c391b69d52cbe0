console.log("b");
