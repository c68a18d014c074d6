"""Running plans: programs (record once, replay after), launches, host steps, control flow, traps."""
