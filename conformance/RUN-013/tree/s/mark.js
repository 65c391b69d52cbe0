require('fs').writeFileSync('marker', 'made');
