#!/usr/bin/env python3
process.stdout.write('node ran ' + process.release.name);
