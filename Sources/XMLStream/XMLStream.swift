// Placeholder: the XMLStream module is being written.
