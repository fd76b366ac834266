"""LTD consists with dry-friction draft gears (paper 003): event-driven and regularised treatments."""
