# exit: 4
# Never reads its stdin and never writes: the validator's writes and waits are bounded.
import time

while True:
    time.sleep(60)
