// btlens-scenario: writes the project's scripted captures (samples, fixtures, benchmark input).
// Errors are one line, "btlens-scenario: …", with exit code 2 for usage and 3 for I/O.
ScenarioTool.main()
