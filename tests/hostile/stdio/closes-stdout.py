# exit: 4
# timeout: 5
# Closes its stdout at once and stays up.
import os
import time

os.close(1)
while True:
    time.sleep(60)
