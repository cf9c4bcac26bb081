"""A ninth new user's domain: a note-taking app's support (neutral test domain)."""
