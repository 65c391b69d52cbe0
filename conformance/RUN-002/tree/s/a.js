console.log('ran')
