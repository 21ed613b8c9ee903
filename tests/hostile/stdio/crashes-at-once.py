# exit: 4
# timeout: 5
# says: exited with exit status: 3
# Exits at once with its secret and escapes on stderr.
import os
import sys

sys.stderr.write("fatal: bad key " + os.environ.get("API_KEY", "") + " \x1b[31m\rforged\n")
sys.exit(3)
