"""SCAN (Lake & Baroni 2018): commands to action sequences, generated from the grammar."""
