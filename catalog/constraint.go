package catalog

// Constraint is one of a table's UNIQUE, CHECK or FOREIGN KEY constraints
// (the primary key is Descriptor.PrimaryKey, and NOT NULL is
// Column.NotNull). Type and the referential actions use pg_constraint's
// codes.
type Constraint struct {
	Name string `json:"name"`
	// Type is "u" (UNIQUE), "c" (CHECK) or "f" (FOREIGN KEY).
	Type string `json:"type"`
	// Columns are the constrained columns (UNIQUE, FOREIGN KEY) in the
	// order written; for a CHECK, the columns its expression reads.
	Columns []string `json:"columns,omitempty"`
	// Check is a CHECK's expression as SQL text.
	Check string `json:"check,omitempty"`
	// RefTable and RefColumns are the table and columns a foreign key
	// references (its primary key or a UNIQUE constraint's columns).
	RefTable   string   `json:"ref_table,omitempty"`
	RefColumns []string `json:"ref_columns,omitempty"`
	// OnDelete and OnUpdate are a foreign key's actions: "a" NO ACTION,
	// "r" RESTRICT, "c" CASCADE, "n" SET NULL, "d" SET DEFAULT.
	OnDelete string `json:"on_delete,omitempty"`
	OnUpdate string `json:"on_update,omitempty"`
	// Deferrable and Deferred: DEFERRABLE [INITIALLY DEFERRED]. A
	// deferred constraint is checked at COMMIT only.
	Deferrable bool `json:"deferrable,omitempty"`
	Deferred   bool `json:"deferred,omitempty"`
}

// Constraint returns the table's constraint named name, or nil.
func (d *Descriptor) Constraint(name string) *Constraint {
	for i := range d.Constraints {
		if d.Constraints[i].Name == name {
			return &d.Constraints[i]
		}
	}
	return nil
}
