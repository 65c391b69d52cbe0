console.log('outside ran')
