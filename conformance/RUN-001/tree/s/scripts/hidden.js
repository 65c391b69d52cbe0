require('fs').writeFileSync('pwned','x')
