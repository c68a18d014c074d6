"""The CPU target: native object code for the host, run by poot.devices.cpu (target.py; stream.py marks streaming stores)."""
