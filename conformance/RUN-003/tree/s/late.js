console.log('late ran')
