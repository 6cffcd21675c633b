"""Planted: a fake torch module. If it shadowed the real one, torch.PLANTED would be True."""

import importlib.util
import sys

PLANTED = True
