// Rows per page of the workers and claimed-task lists: shared by the panel and the page that reads their first pages.
export const PAGE_SIZE = 25;
