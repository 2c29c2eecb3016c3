"use client";

export function QueryError({ error }: { error: { message: string } }) {
  return (
    <div className="alert alert-error" role="alert">
      Could not load this: {error.message}
    </div>
  );
}
