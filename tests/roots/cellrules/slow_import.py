"""A library that takes a while to import, as numba or quantecon do."""
import time

time.sleep(0.5)
