"""A library that takes a while to import, as quantecon or numba do."""
import time

time.sleep(1.5)
