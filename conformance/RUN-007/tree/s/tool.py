print('python ran')
