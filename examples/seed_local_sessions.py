"""Seed 004, first code block: two local sessions keep separate state.

Each `tf.Session()` has its own execution engine, so incrementing `var` in session 1 does
not change it in session 2. Run: `python examples/seed_local_sessions.py`.
"""

import tensorweave as tf

var = tf.Variable(initial_value=0.0)

sess1 = tf.Session()
sess2 = tf.Session()

sess1.run(tf.global_variables_initializer())
sess2.run(tf.global_variables_initializer())

print("Initial value of var in session 1:", sess1.run(var))
print("Initial value of var in session 2:", sess2.run(var))

sess1.run(var.assign_add(1.0))
print("Incremented var in session 1")

print("Value of var in session 1:", sess1.run(var))
print("Value of var in session 2:", sess2.run(var))
