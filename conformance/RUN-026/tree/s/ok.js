console.log("ran");
