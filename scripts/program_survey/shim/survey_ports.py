"""Free 127.0.0.1 ports for the A3C program's hard-coded cluster (chosen once, in the env)."""
import os

PS_HOSTS = os.environ["SURVEY_PS"].split(",")
WORKER_HOSTS = os.environ["SURVEY_WORKERS"].split(",")
