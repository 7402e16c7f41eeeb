"""The Telegram front end: python-telegram-bot v22 handlers around the assistant."""
