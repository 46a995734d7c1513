print("btlens")
