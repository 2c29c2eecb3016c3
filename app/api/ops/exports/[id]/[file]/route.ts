import { notFound } from "next/navigation";
import { exportFileResponse } from "../../../../../../server/lifecycle/export-download.ts";

// A finished tenant export's file, for operators (see server/lifecycle/export-download.ts).
export async function GET(_request: Request, { params }: { params: Promise<{ id: string; file: string }> }) {
  const { id, file } = await params;
  return (await exportFileResponse(id, file)) ?? notFound();
}
